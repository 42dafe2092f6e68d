import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class LoginDto {
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(100) username: string;
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(200) password: string;
}
