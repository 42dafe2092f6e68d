import { ApiProperty } from '@nestjs/swagger';

class NotificationRecord {
  @ApiProperty({ example: 'PAY-2024-0001' }) reference: string;
  @ApiProperty({ enum: ['SMS'], example: 'SMS' }) channel: string;
  @ApiProperty({ example: '254712345678' }) recipient: string;
  @ApiProperty({ example: 'You have received KES 1,000.00 from Acme Ltd. Ref PAY-2024-0001' }) message: string;
  @ApiProperty({ enum: ['QUEUED', 'SENT', 'FAILED'], example: 'SENT' }) status: string;
  @ApiProperty({ type: String, nullable: true, example: 'SBXSMS7Q2K9X' }) provider_reference: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) sent_at: string | null;
}

/** The messages sent to recipients about one payout reference. */
export class NotificationList {
  @ApiProperty({ example: 'PAY-2024-0001' }) reference: string;
  @ApiProperty({ type: [NotificationRecord] }) notifications: NotificationRecord[];
}
